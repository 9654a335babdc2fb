//! The project's own locks, model-checked: the ticket lock ([`TicketLock`]) and the measuring
//! wrapper ([`Measured`]) as they are compiled for every run, on the facade's atomics, which under
//! `--cfg loom` are loom's. (The scheduler's `Lock` is loom's `Mutex` in the scheduler models, so
//! those never looked inside these two.) Loom models weak memory for Acquire/Release: a hold's
//! data is a loom [`UnsafeCell`], so an acquisition that is not ordered after the previous release
//! shows as loom's "Causality violation", whatever the machine the test runs on (x86 forgives a
//! missing Acquire or Release; loom does not).
//!
//! | model | property | negative controls (`tests/loom_locks.rs`) |
//! | --- | --- | --- |
//! | [`exclusion_and_publication`] | two threads take the lock with `lock()` (first attempt, or queue and wait): never two holders, and each hold sees the data the previous one wrote | each of the three Acquire loads and the Release store weakened to Relaxed (`fault::Fault::Ticket*`); [`SplitTestAndSet`] (a test and a set that are two steps) |
//! | [`try_lock_publishes`] | `try_lock` against `lock()`: a successful try holds the lock alone and sees the previous hold's data; a try while it is held fails | `try_lock`'s Acquire weakened (the way this file's `try_lock` was written until this model: Relaxed load, Acquire on `next`, which nothing releases) |
//! | [`fifo_handoff`] | two acquisitions queued in a known order while the lock is held are admitted in that order, and both first attempts say "contended" | [`Barging`] (a test-and-set lock: whoever polls first after the release enters) |
//! | [`measured_counts`] | through [`Measured`]: acquisitions, contentions (from the raw lock's own first attempt) and owner changes counted exactly: 2 owners, a contended and two uncontended acquisitions | [`NeverQueues`] (a raw lock whose first attempt waits inside and answers "uncontended"); the owner word written after the raw unlock (`fault::Fault::OwnerAfterRelease`) |
//!
//! parking_lot is taken as given: it is not compiled under a checker.
//!
//! The broken raw locks below are written through the same public trait ([`RawLockWait`]) as the
//! real ones, and need `unsafe impl` to claim what they do not do.

use schedlab_core::sync::measure::{self, LockClass};
use schedlab_core::sync::{
    thread, violation, Arc, AtomicBool, GuardNoSend, Measured, Ordering, RawLockWait, RawMutex,
    TicketLock, UnsafeCell,
};

use crate::scenarios::require;

/// A raw lock a lock model can build and ask whether a waiter is queued (to make contention it
/// knows, rather than hope for a race). The FIFO and counting models also need its two-step
/// acquisition ([`RawLockWait`]).
pub trait ModelLock: RawMutex + Send + Sync + 'static {
    fn make() -> Self;
    /// Whether a thread besides the holder has queued for the lock.
    fn has_waiters(&self) -> bool;
}

impl ModelLock for TicketLock {
    fn make() -> Self {
        TicketLock::new()
    }

    fn has_waiters(&self) -> bool {
        TicketLock::has_waiters(self)
    }
}

/// The class the lock models' measured locks count as.
fn model_class() -> LockClass {
    LockClass::register("loom-model")
}

impl<R: ModelLock + RawLockWait> ModelLock for Measured<R> {
    fn make() -> Self {
        Measured::new(R::make(), model_class())
    }

    fn has_waiters(&self) -> bool {
        self.raw().has_waiters()
    }
}

/// What every hold of a model does: checks it is alone (an oracle count, outside what loom
/// explores), then writes the protected data (a loom cell: an unordered access is a causality
/// violation).
struct Shared<L> {
    lock: L,
    data: UnsafeCell<u64>,
    holders: std::sync::atomic::AtomicUsize,
}

// SAFETY: `data` is only touched inside a hold of `lock` (`hold`), which is what the models check:
// if the lock does not order the holds, loom reports the access, which is the point.
unsafe impl<L: Sync> Sync for Shared<L> {}

impl<L: ModelLock> Shared<L> {
    fn new() -> Arc<Self> {
        Arc::new(Shared {
            lock: L::make(),
            data: UnsafeCell::new(0),
            holders: std::sync::atomic::AtomicUsize::new(0),
        })
    }

    /// The critical section: alone, and the data incremented.
    fn hold(&self) {
        let before = self.holders.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        require(before == 0, || {
            format!("mutual exclusion: {} other holder(s) inside the lock", before)
        });
        // SAFETY: inside a hold of `self.lock` (the property under check).
        self.data.with_mut(|v| unsafe { *v += 1 });
        self.holders.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The data, read after every thread was joined.
    fn value(&self) -> u64 {
        // SAFETY: every other thread has been joined.
        self.data.with(|v| unsafe { *v })
    }

    fn lock_and_hold(&self) {
        let guard = self.lock.lock();
        self.hold();
        // SAFETY: held through `guard`, just taken.
        unsafe { self.lock.unlock(guard) };
    }
}

/// Mutual exclusion and publication through `lock()`: the main thread and thread A each take the
/// lock once (whichever comes second takes its first attempt after the release, or queues and
/// waits: both admissions are explored) and increment the data inside.
pub fn exclusion_and_publication<L: ModelLock>() {
    let shared = Shared::<L>::new();
    let a = {
        let shared = shared.clone();
        thread::spawn(move || shared.lock_and_hold())
    };
    shared.lock_and_hold();
    a.join().unwrap();
    let v = shared.value();
    require(v == 2, || format!("mutual exclusion: two holds made {v} increments"));
}

/// `try_lock` against `lock()`: thread A tries once; the main thread takes the lock, writes, and
/// releases, then tries once more. A try that succeeds holds alone and sees every earlier hold's
/// data; a try that fails did so because the lock was held.
pub fn try_lock_publishes<L: ModelLock>() {
    let shared = Shared::<L>::new();
    let a = {
        let shared = shared.clone();
        thread::spawn(move || match shared.lock.try_lock() {
            Some(guard) => {
                shared.hold();
                // SAFETY: held through `guard`, just taken.
                unsafe { shared.lock.unlock(guard) };
                1
            }
            None => 0,
        })
    };
    shared.lock_and_hold();
    let mut taken = 1;
    if let Some(guard) = shared.lock.try_lock() {
        shared.hold();
        // SAFETY: held through `guard`, just taken.
        unsafe { shared.lock.unlock(guard) };
        taken += 1;
    }
    taken += a.join().unwrap();
    let v = shared.value();
    require(v == taken, || format!("mutual exclusion: {taken} holds made {v} increments"));
    require(taken >= 2, || {
        "try_lock: both tries failed although one of them came with the lock free".into()
    });
}

/// FIFO hand-off: the main thread holds the lock and makes two first attempts, for B and then
/// for C; both must say "contended" (the lock is held). It hands B's queued acquisition (the
/// ticket) to thread B (a queued acquisition belongs to the lock, not to the thread that queued:
/// `RawLockWait`), releases, and waits for C's turn itself. B must enter before C, and each must
/// see the data of the hold before it. (Queueing on the main thread fixes the order without flags
/// to spin on; a third thread spinning on the lock made loom's state space explode.)
pub fn fifo_handoff<L: ModelLock + RawLockWait>()
where
    L::Queued: Send + 'static,
{
    let shared = Shared::<L>::new();
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let guard = shared.lock.lock();
    let mut queued = Vec::new();
    for name in ["B", "C"] {
        match shared.lock.lock_or_queue() {
            Ok(_) => {
                violation(format!(
                    "first attempt: {name}'s said uncontended while the lock was held"
                ));
                return;
            }
            Err(q) => queued.push(q),
        }
    }
    let c_queued = queued.pop().expect("two queued");
    let b_queued = queued.pop().expect("two queued");
    let b = {
        let (shared, order) = (shared.clone(), order.clone());
        thread::spawn(move || {
            let guard = shared.lock.wait_queued(b_queued);
            order.lock().unwrap().push("B");
            shared.hold();
            // SAFETY: held through `guard`.
            unsafe { shared.lock.unlock(guard) };
        })
    };
    shared.hold();
    // SAFETY: held through `guard`, taken above.
    unsafe { shared.lock.unlock(guard) };
    let guard = shared.lock.wait_queued(c_queued);
    order.lock().unwrap().push("C");
    shared.hold();
    // SAFETY: held through `guard`.
    unsafe { shared.lock.unlock(guard) };
    b.join().unwrap();
    let order = order.lock().unwrap().clone();
    require(order == ["B", "C"], || format!("FIFO: queued B then C, admitted {order:?}"));
    let v = shared.value();
    require(v == 3, || format!("mutual exclusion: three holds made {v} increments"));
}

/// The stack of the measured model's threads (see `thread::spawn_with_stack`).
const MEASURED_STACK: usize = 1 << 20;

/// The measured wrapper's counts, exactly: thread M takes the lock; thread A asks for it while it
/// is held (M releases only once A has queued, so A's first attempt must say "contended"); after
/// A is joined M takes it again (uncontended). With measurement on: 3 acquisitions, 1 contention,
/// 2 owner changes (M → A → M: the first acquisition of a lock is no change). M is a thread of
/// its own, not the model's main thread, for the stack the measurement's thread state needs.
pub fn measured_counts<L: ModelLock + RawLockWait>() {
    thread::spawn_with_stack(MEASURED_STACK, measured_counts_body::<L>).join().unwrap();
}

fn measured_counts_body<L: ModelLock + RawLockWait>() {
    measure::reset();
    measure::set_enabled(true);
    let class = model_class();
    let shared = Shared::<Measured<L>>::new();
    let guard = shared.lock.lock();
    let a = {
        let shared = shared.clone();
        thread::spawn_with_stack(MEASURED_STACK, move || {
            shared.lock_and_hold();
            measure::flush();
        })
    };
    while !shared.lock.has_waiters() {
        thread::yield_now();
    }
    shared.hold();
    // SAFETY: held through `guard`, taken above.
    unsafe { shared.lock.unlock(guard) };
    a.join().unwrap();
    shared.lock_and_hold();
    let stats = measure::snapshot();
    measure::set_enabled(false);
    let Some(s) = stats.class(class) else {
        violation("measured lock: nothing counted".into());
        return;
    };
    let counts = (s.acquisitions, s.contentions, s.owner_changes);
    require(counts.0 == 3, || format!("measured lock: {} acquisitions counted, 3 made", counts.0));
    require(counts.1 == 1, || {
        format!(
            "measured lock: {} contentions counted, 1 made (the first attempt's answer)",
            counts.1
        )
    });
    require(counts.2 == 2, || format!("measured lock: {} owner changes counted, 2 made", counts.2));
    let v = shared.value();
    require(v == 3, || format!("mutual exclusion: three holds made {v} increments"));
}

// ---- broken raw locks (negative controls) ----

/// A test-and-set lock: the first attempt and every poll test the flag and set it; the release
/// clears it. With `ONE_STEP` the test and the set are one swap ([`Barging`]); without, they are
/// two steps, a load and then a store ([`SplitTestAndSet`]). The rest is the same lock.
pub struct TestAndSet<const ONE_STEP: bool> {
    locked: AtomicBool,
}

/// A real test-and-set lock. It excludes and publishes, but whoever polls first after a release
/// enters: not FIFO.
pub type Barging = TestAndSet<true>;

/// A test-and-set whose test and set are two steps (a load, then a store): two threads can both
/// see the lock free and both enter.
pub type SplitTestAndSet = TestAndSet<false>;

// SAFETY: claimed. With `ONE_STEP`, as a real test-and-set lock would claim it: the swap admits
// one holder at a time, Acquire on the swap pairs with the Release clear. What it does not give is
// FIFO order, which `fifo_handoff` checks. Without, wrongly: the load and the store are not one
// atomic step, so the lock does not exclude (`exclusion_and_publication` rejects it).
unsafe impl<const ONE_STEP: bool> RawMutex for TestAndSet<ONE_STEP> {
    const INIT: Self = panic!("the lock models build their locks with ModelLock::make");
    type Guard = GuardNoSend;

    fn lock(&self) -> GuardNoSend {
        match self.lock_or_queue() {
            Ok(g) => g,
            Err(()) => self.wait_queued(()),
        }
    }

    fn try_lock(&self) -> Option<GuardNoSend> {
        if ONE_STEP {
            return (!self.locked.swap(true, Ordering::Acquire)).then(GuardNoSend::new);
        }
        if self.locked.load(Ordering::Acquire) {
            return None;
        }
        self.locked.store(true, Ordering::Relaxed);
        Some(GuardNoSend::new())
    }

    unsafe fn unlock(&self, _guard: GuardNoSend) {
        self.locked.store(false, Ordering::Release);
    }

    fn is_locked(&self) -> bool {
        self.locked.load(Ordering::Relaxed)
    }
}

// SAFETY: `Ok` and `wait_queued`'s return both come from a successful `try_lock`: as right, or
// as wrong, as the `RawMutex` claim above.
unsafe impl<const ONE_STEP: bool> RawLockWait for TestAndSet<ONE_STEP> {
    type Queued = ();

    fn lock_or_queue(&self) -> Result<GuardNoSend, ()> {
        self.try_lock().ok_or(())
    }

    fn wait_queued(&self, (): ()) -> GuardNoSend {
        loop {
            if let Some(g) = self.try_lock() {
                return g;
            }
            thread::yield_now();
        }
    }
}

impl<const ONE_STEP: bool> ModelLock for TestAndSet<ONE_STEP> {
    fn make() -> Self {
        TestAndSet { locked: AtomicBool::new(false) }
    }

    /// A test-and-set lock keeps no queue: a waiter is known only by its own flag (unused here).
    fn has_waiters(&self) -> bool {
        false
    }
}

/// A ticket lock whose first attempt never says "contended": it waits inside and answers `Ok`
/// (the wrapper then counts no contention and times no wait). Excludes, publishes, and is FIFO;
/// only its answer is wrong.
pub struct NeverQueues(TicketLock);

// SAFETY: every acquisition is the ticket lock's own `lock`, every release its `unlock`.
unsafe impl RawMutex for NeverQueues {
    const INIT: Self = panic!("the lock models build their locks with ModelLock::make");
    type Guard = GuardNoSend;

    fn lock(&self) -> GuardNoSend {
        self.0.lock()
    }

    fn try_lock(&self) -> Option<GuardNoSend> {
        self.0.try_lock()
    }

    unsafe fn unlock(&self, guard: GuardNoSend) {
        // SAFETY: the caller holds the inner lock (this lock's contract).
        unsafe { self.0.unlock(guard) }
    }

    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
}

// SAFETY: `Ok` is returned only after the inner lock's `lock` returned, i.e. with the lock held;
// the claim that this was a first attempt that did not wait is the lie under test.
unsafe impl RawLockWait for NeverQueues {
    type Queued = ();

    fn lock_or_queue(&self) -> Result<GuardNoSend, ()> {
        Ok(self.0.lock())
    }

    fn wait_queued(&self, (): ()) -> GuardNoSend {
        self.0.lock()
    }
}

impl ModelLock for NeverQueues {
    fn make() -> Self {
        NeverQueues(TicketLock::new())
    }

    fn has_waiters(&self) -> bool {
        self.0.has_waiters()
    }
}

/// Calls `$callback! { name: expect, fault, body; ... }` with every lock model and its negative
/// controls (loom only: `tests/loom_locks.rs`; shuttle's atomics are all SeqCst, so it could not
/// reject the weakened orderings).
#[macro_export]
macro_rules! for_each_lock_model {
    ($($callback:ident)::+) => {
        $($callback)::+! {
            // ---- mutual exclusion and publication through lock() ----
            ticket_exclusion_and_publication: Pass, None,
                $crate::locks::exclusion_and_publication::<schedlab_core::sync::TicketLock>;
            measured_exclusion_and_publication: Pass, None,
                $crate::locks::exclusion_and_publication::<schedlab_core::sync::Measured<schedlab_core::sync::TicketLock>>;
            ticket_first_attempt_relaxed: Rejected("Causality violation"),
                Some(schedlab_core::fault::Fault::TicketFirstAttemptRelaxed),
                $crate::locks::exclusion_and_publication::<schedlab_core::sync::TicketLock>;
            ticket_wait_relaxed: Rejected("Causality violation"),
                Some(schedlab_core::fault::Fault::TicketWaitRelaxed),
                $crate::locks::exclusion_and_publication::<schedlab_core::sync::TicketLock>;
            ticket_release_relaxed: Rejected("Causality violation"),
                Some(schedlab_core::fault::Fault::TicketReleaseRelaxed),
                $crate::locks::exclusion_and_publication::<schedlab_core::sync::TicketLock>;
            measured_release_relaxed: Rejected("Causality violation"),
                Some(schedlab_core::fault::Fault::TicketReleaseRelaxed),
                $crate::locks::exclusion_and_publication::<schedlab_core::sync::Measured<schedlab_core::sync::TicketLock>>;
            split_test_and_set: Rejected("mutual exclusion|Causality violation"), None,
                $crate::locks::exclusion_and_publication::<$crate::locks::SplitTestAndSet>;

            // ---- try_lock ----
            ticket_try_lock_publishes: Pass, None,
                $crate::locks::try_lock_publishes::<schedlab_core::sync::TicketLock>;
            measured_try_lock_publishes: Pass, None,
                $crate::locks::try_lock_publishes::<schedlab_core::sync::Measured<schedlab_core::sync::TicketLock>>;
            ticket_try_relaxed: Rejected("Causality violation"),
                Some(schedlab_core::fault::Fault::TicketTryRelaxed),
                $crate::locks::try_lock_publishes::<schedlab_core::sync::TicketLock>;

            // ---- FIFO hand-off and the first attempt's answer ----
            ticket_fifo_handoff: Pass, None,
                $crate::locks::fifo_handoff::<schedlab_core::sync::TicketLock>;
            barging_is_not_fifo: Rejected("FIFO"), None,
                $crate::locks::fifo_handoff::<$crate::locks::Barging>;

            // ---- the measured wrapper's counts ----
            measured_counts: Pass, None,
                $crate::locks::measured_counts::<schedlab_core::sync::TicketLock>;
            measured_never_queues: Rejected("contentions counted"), None,
                $crate::locks::measured_counts::<$crate::locks::NeverQueues>;
            measured_owner_after_release: Rejected("owner changes counted"),
                Some(schedlab_core::fault::Fault::OwnerAfterRelease),
                $crate::locks::measured_counts::<schedlab_core::sync::TicketLock>;
        }
    };
}
