//! The real backend of the sync facade: std atomics and threads, the TSC clocks (the scheduler's
//! and the lock statistics'), the CPU slot. The two lock kinds are in `lock.rs`.

pub use std::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
pub use std::sync::Arc;
/// Threads: std's, plus [`thread::spawn_with_stack`] (the model backend's needs it).
pub mod thread {
    pub use std::thread::*;

    /// `spawn` with a stack of at least `bytes`.
    pub fn spawn_with_stack<F, T>(bytes: usize, body: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        Builder::new().stack_size(bytes).spawn(body).expect("spawning a thread")
    }
}

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

/// The raw real-time source of the scheduler's real clock: the TSC through `quanta`.
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

/// Branch points are counted only under a checker (`crate::coverage`): here a no-op.
#[inline(always)]
pub fn coverage_point(_name: &'static str) {}

/// Nothing is recorded outside a checker.
pub fn coverage_take() -> Vec<&'static str> {
    Vec::new()
}
