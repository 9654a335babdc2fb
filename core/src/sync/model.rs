//! The model-checking backend of the sync facade: loom (`cfg(loom)`, exhaustive within a
//! preemption bound) or shuttle (`cfg(shuttle)`, randomised and PCT schedules of larger
//! scenarios). Both run every modelled thread on the test's own OS thread, so the plain `std`
//! thread-locals below (the violation slot) are shared by the whole model.
//!
//! What the two checkers see differently (notes/loom-budget.md):
//! - loom explores every interleaving up to the bound, and the values a relaxed load may read;
//!   crossbeam-epoch is built with its own loom instrumentation (`--cfg crossbeam_loom`), so its
//!   internals are explored too;
//! - shuttle samples schedules (random, or PCT with a bug depth) and treats every atomic as
//!   SeqCst; crossbeam-epoch runs uninstrumented, as a black box whose only scheduling points are
//!   the facade's own operations around it.

#[cfg(loom)]
pub use loom::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub use loom::sync::Arc;
#[cfg(loom)]
use loom::sync::{Mutex as ModelMutex, MutexGuard as ModelMutexGuard};

#[cfg(shuttle)]
pub use shuttle::sync::atomic::{fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
#[cfg(shuttle)]
pub use shuttle::sync::Arc;
#[cfg(shuttle)]
use shuttle::sync::{Mutex as ModelMutex, MutexGuard as ModelMutexGuard};

/// Threads of a model. `spawn` also releases the thread's epoch participant when its body
/// returns (see [`super::epoch`]): a checker's thread-local destructors are not ordered before
/// `join`, so a participant left to them could stay "pinned" forever in the joiner's view.
pub mod thread {
    #[cfg(loom)]
    use loom::thread as backend;
    #[cfg(shuttle)]
    use shuttle::thread as backend;

    pub use backend::{yield_now, JoinHandle};

    /// Spawns a model thread.
    pub fn spawn<F, T>(body: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        backend::spawn(move || {
            let out = body();
            super::super::epoch::release_thread_participant();
            out
        })
    }
}

/// `true` when the code runs inside a model checker.
pub const MODEL_CHECKING: bool = true;

/// Quarantines the object: it is neither dropped nor deallocated, so that a later access
/// through a stale pointer reads its poisoned [`super::Liveness`] word (poisoned by the caller
/// before this call) and fails an assertion, instead of touching freed memory. Nothing inside
/// is released either: a quarantined object must not own a checker's `Arc` (loom would report it
/// leaked); objects use [`super::OracleArc`] for what they share with their census.
pub fn reclaim<T>(object: Box<T>) {
    std::mem::forget(object);
}

std::thread_local! {
    /// The first violation seen by the model running on this OS thread.
    static VIOLATION: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Records a violated invariant; [`model`] fails once the checker has finished.
///
/// Panicking on the spot would unwind through the checker's lock guards and crossbeam's epoch
/// state, whose drops call back into the checker after it tore the execution down (an abort, not
/// a test failure). Quarantined objects stay valid memory, so executions can safely run on.
pub fn violation(message: String) {
    VIOLATION.with(|v| {
        v.borrow_mut().get_or_insert(message);
    });
}

/// Takes the recorded violation, if any (the checker-agnostic end of [`model`]).
pub fn take_violation() -> Option<String> {
    VIOLATION.with(|v| v.borrow_mut().take())
}

/// The branch budget of one loom execution: a scheduler path makes hundreds of loom operations
/// (every per-CPU add and every locked sum is one), far above loom's default of 1 000.
#[cfg(loom)]
const MODEL_MAX_BRANCHES: usize = 1_000_000;

/// How a model is explored.
#[derive(Clone, Copy, Debug)]
pub struct Exploration {
    /// loom: the preemption bound (`None`: `LOOM_MAX_PREEMPTIONS`, as the test command sets it).
    pub max_preemptions: Option<usize>,
    /// shuttle: schedules tried (`SCHEDLAB_SHUTTLE_ITERATIONS` overrides it).
    pub iterations: usize,
    /// shuttle: PCT's bug depth; `None` for the uniformly random scheduler.
    pub pct_depth: Option<usize>,
    /// shuttle: the first seed (`SCHEDLAB_SHUTTLE_SEED` overrides it).
    pub seed: u64,
}

impl Default for Exploration {
    fn default() -> Self {
        Exploration { max_preemptions: None, iterations: 1_000, pct_depth: Some(3), seed: 0x5c4e_d1ab }
    }
}

/// Runs a model body under the checker with the default exploration, then panics with the first
/// [`violation`] any execution recorded.
pub fn model<F: Fn() + Sync + Send + 'static>(body: F) {
    model_with(Exploration::default(), body)
}

/// [`model`] with an explicit exploration.
pub fn model_with<F: Fn() + Sync + Send + 'static>(exploration: Exploration, body: F) {
    take_violation();
    #[cfg(loom)]
    {
        let mut builder = loom::model::Builder::new();
        builder.max_branches = builder.max_branches.max(MODEL_MAX_BRANCHES);
        if let Some(bound) = exploration.max_preemptions {
            // The test command's bound is the ceiling: a model may only ask for less.
            builder.preemption_bound = Some(builder.preemption_bound.map_or(bound, |env| env.min(bound)));
        }
        builder.check(body);
    }
    #[cfg(shuttle)]
    {
        let body = std::sync::Arc::new(body);
        let iterations = env_or("SCHEDLAB_SHUTTLE_ITERATIONS", exploration.iterations as u64) as usize;
        let seed = env_or("SCHEDLAB_SHUTTLE_SEED", exploration.seed);
        for i in 0..iterations as u64 {
            if !run_shuttle_schedule(&exploration, seed.wrapping_add(i), body.clone()) {
                break;
            }
        }
    }
    if let Some(message) = take_violation() {
        panic!("{message}");
    }
}

#[cfg(shuttle)]
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Runs one shuttle schedule of `body` from `seed`; `false` if it recorded a violation.
#[cfg(shuttle)]
pub fn run_shuttle_schedule<F: Fn() + Sync + Send + 'static>(exploration: &Exploration, seed: u64, body: std::sync::Arc<F>) -> bool {
    use shuttle::scheduler::{PctScheduler, RandomScheduler};
    let mut config = shuttle::Config::new();
    config.max_steps = shuttle::MaxSteps::FailAfter(2_000_000);
    let f = move || body();
    match exploration.pct_depth {
        Some(depth) => shuttle::Runner::new(PctScheduler::new_from_seed(seed, depth, 1), config).run(f),
        None => shuttle::Runner::new(RandomScheduler::new_from_seed(seed, 1), config).run(f),
    };
    VIOLATION.with(|v| v.borrow().is_none())
}

/// Under a checker the real clock is `std::time::Instant` (quanta's dependency on crossbeam's
/// `AtomicCell` does not build under `crossbeam_loom`); models use the manual clock anyway.
pub struct RawClock {
    origin: std::time::Instant,
}

impl Default for RawClock {
    fn default() -> Self {
        Self::new()
    }
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

/// Lock statistics are not measured under a checker (named locks are plain model mutexes); the
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

/// A lock of either kind around `T`: under a checker both kinds are the checker's `Mutex`, whose
/// blocking it understands.
pub struct Lock<T> {
    kind: super::LockKind,
    inner: ModelMutex<T>,
}

/// Proof that a [`Lock`] is held.
pub type LockGuard<'a, T> = ModelMutexGuard<'a, T>;

impl<T> Lock<T> {
    pub fn new(kind: super::LockKind, value: T) -> Self {
        Lock { kind, inner: ModelMutex::new(value) }
    }

    /// As [`Lock::new`]: lock statistics are not measured under a checker.
    pub fn named(kind: super::LockKind, _class: crate::lockstat::LockClass, value: T) -> Self {
        Self::new(kind, value)
    }

    pub fn lock(&self) -> LockGuard<'_, T> {
        self.inner.lock().expect("a model thread panicked while holding a lock")
    }

    pub fn kind(&self) -> super::LockKind {
        self.kind
    }
}
