//! The model-checking backend of the sync facade: loom (`cfg(loom)`, exhaustive within a
//! preemption bound) or shuttle (`cfg(shuttle)`, randomised and PCT schedules of larger
//! scenarios). Both run every modelled thread on the test's own OS thread, so the plain `std`
//! thread-locals below (the violation slot) are shared by the whole model.
//!
//! What the two checkers see differently (notes/verify-budget.md):
//! - loom explores every interleaving up to the bound, and the values a relaxed load may read;
//!   crossbeam-epoch is built with its own loom instrumentation (`--cfg crossbeam_loom`), so its
//!   internals are explored too;
//! - shuttle samples schedules (random, or PCT with a bug depth) and treats every atomic as
//!   SeqCst; crossbeam-epoch runs uninstrumented, as a black box whose only scheduling points are
//!   the facade's own operations around it.

#[cfg(loom)]
pub use loom::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub use loom::sync::Arc;
#[cfg(loom)]
use loom::sync::{Mutex as ModelMutex, MutexGuard as ModelMutexGuard};

#[cfg(shuttle)]
pub use shuttle::sync::atomic::{
    fence, AtomicBool, AtomicI64, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
#[cfg(shuttle)]
pub use shuttle::sync::Arc;
#[cfg(shuttle)]
use shuttle::sync::{Mutex as ModelMutex, MutexGuard as ModelMutexGuard};

/// Threads of a model. `spawn` also releases the thread's epoch participant when its body
/// returns (see [`super::epoch`]): a checker's thread-local destructors are not ordered before
/// `join`, so a participant left to them could stay "pinned" forever in the joiner's view.
pub mod thread {
    #[cfg(shuttle)]
    use super::{AtomicBool, Ordering};
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
        let handle = backend::spawn(move || {
            let out = body();
            super::super::epoch::release_thread_participant();
            out
        });
        // shuttle's PCT draws its change points from the first schedule's length, counted only
        // where two threads could run: one scheduling point with both runnable (an atomic load,
        // not a yield, which would also lower the spawner's priority) keeps a scenario whose
        // spawner would otherwise run on alone from counting as sequential.
        #[cfg(shuttle)]
        AtomicBool::new(false).load(Ordering::SeqCst);
        handle
    }

    /// [`spawn`] with a stack of `bytes`: a model thread is a coroutine with a small stack, too
    /// small for the lock measurement's per-thread state (`measure`'s `Fast`, about 10 KB, built
    /// on first use).
    pub fn spawn_with_stack<F, T>(bytes: usize, body: F) -> JoinHandle<T>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        backend::Builder::new()
            .stack_size(bytes)
            .spawn(move || {
                let out = body();
                super::super::epoch::release_thread_participant();
                out
            })
            .expect("spawning a model thread")
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
    if std::env::var_os(STOP_AT_FIRST_VIOLATION).is_some() {
        // A model running in a process of its own (`schedlab_verify::harness`): the first
        // violation decides the outcome, so report it and end the process now rather than explore
        // the rest of the schedules.
        eprintln!("model violation: {message}");
        std::process::exit(101);
    }
    VIOLATION.with(|v| {
        v.borrow_mut().get_or_insert(message);
    });
}

/// Set in the environment of a process that runs exactly one model (the harness's child): the
/// first violation ends it.
pub const STOP_AT_FIRST_VIOLATION: &str = "SCHEDLAB_MODEL_STOP_AT_FIRST_VIOLATION";

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
    /// shuttle: schedules tried per scheduler (`SCHEDLAB_SHUTTLE_ITERATIONS` overrides it).
    pub iterations: usize,
    /// shuttle: PCT's bug depth, for a PCT run followed by a random one; `None` for the uniformly
    /// random scheduler alone.
    pub pct_depth: Option<usize>,
    /// shuttle: the first seed (`SCHEDLAB_SHUTTLE_SEED` overrides it).
    pub seed: u64,
}

impl Default for Exploration {
    fn default() -> Self {
        Exploration {
            max_preemptions: None,
            iterations: 2_000,
            pct_depth: Some(3),
            seed: 0x5c4e_d1ab,
        }
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
            builder.preemption_bound =
                Some(builder.preemption_bound.map_or(bound, |env| env.min(bound)));
        }
        builder.check(body);
    }
    #[cfg(shuttle)]
    {
        // A portfolio: PCT (which finds bugs of small depth among long schedules) and then the
        // uniformly random scheduler (which finds what needs many short preemptions); they catch
        // different controls (notes/verify-budget.md). Stops at the first violation.
        let body = std::sync::Arc::new(body);
        let mut schedulers = vec![exploration];
        if exploration.pct_depth.is_some() {
            schedulers.push(Exploration { pct_depth: None, ..exploration });
        }
        for scheduler in schedulers {
            let body = body.clone();
            let outcome = explore_shuttle(&scheduler, move || body(), true);
            if let Some(message) = outcome.first_message {
                violation(message);
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

/// What a shuttle exploration saw.
#[cfg(shuttle)]
#[derive(Clone, Debug, Default)]
pub struct ShuttleOutcome {
    /// Schedules run.
    pub iterations: usize,
    /// Schedules in which a violation was recorded.
    pub detections: usize,
    /// The 1-based number of the first schedule with a violation.
    pub first_detection: Option<usize>,
    /// What that schedule violated.
    pub first_message: Option<String>,
}

/// Runs `body` under shuttle for `exploration.iterations` schedules (overridable with
/// `SCHEDLAB_SHUTTLE_ITERATIONS` and `SCHEDLAB_SHUTTLE_SEED`) from one scheduler, so that PCT
/// re-draws its priorities and change points for each schedule (its first schedule is its
/// default order). With `stop_at_first`, the schedules after a detection return at once.
#[cfg(shuttle)]
pub fn explore_shuttle<F: Fn() + Sync + Send + 'static>(
    exploration: &Exploration,
    body: F,
    stop_at_first: bool,
) -> ShuttleOutcome {
    use shuttle::scheduler::{PctScheduler, RandomScheduler};
    use std::sync::{Arc, Mutex};
    let iterations = env_or("SCHEDLAB_SHUTTLE_ITERATIONS", exploration.iterations as u64) as usize;
    let seed = env_or("SCHEDLAB_SHUTTLE_SEED", exploration.seed);
    let outcome = Arc::new(Mutex::new(ShuttleOutcome::default()));
    let seen = outcome.clone();
    let each = move || {
        let skip = stop_at_first && seen.lock().unwrap().first_message.is_some();
        if skip {
            // Shuttle needs one scheduling point per schedule; the run is decided already.
            shuttle::thread::yield_now();
            return;
        }
        take_violation();
        body();
        let mut o = seen.lock().unwrap();
        o.iterations += 1;
        if let Some(message) = take_violation() {
            o.detections += 1;
            if o.first_message.is_none() {
                o.first_detection = Some(o.iterations);
                o.first_message = Some(message);
            }
        }
    };
    let mut config = shuttle::Config::new();
    config.max_steps = shuttle::MaxSteps::FailAfter(2_000_000);
    config.silence_warnings = true;
    match exploration.pct_depth {
        Some(depth) => {
            shuttle::Runner::new(PctScheduler::new_from_seed(seed, depth, iterations), config)
                .run(each)
        }
        None => {
            shuttle::Runner::new(RandomScheduler::new_from_seed(seed, iterations), config).run(each)
        }
    };
    let o = outcome.lock().unwrap().clone();
    o
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
/// clock exists so that `measure` compiles: ns since the first call.
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
    pub fn named(kind: super::LockKind, _class: super::measure::LockClass, value: T) -> Self {
        Self::new(kind, value)
    }

    pub fn lock(&self) -> LockGuard<'_, T> {
        self.inner.lock().expect("a model thread panicked while holding a lock")
    }

    pub fn kind(&self) -> super::LockKind {
        self.kind
    }
}

/// loom's `UnsafeCell`, whose accesses loom checks for races, with the facade's API (`with`,
/// `with_mut`: the real build's is `cell.rs`, which shuttle uses too).
#[cfg(loom)]
#[derive(Debug)]
pub struct UnsafeCell<T>(loom::cell::UnsafeCell<T>);

#[cfg(loom)]
impl<T> UnsafeCell<T> {
    pub fn new(value: T) -> Self {
        UnsafeCell(loom::cell::UnsafeCell::new(value))
    }

    /// Runs `f` with a shared pointer to the contents (loom records a shared access).
    #[inline]
    pub fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        self.0.with(f)
    }

    /// Runs `f` with an exclusive pointer to the contents (loom records an exclusive access).
    #[inline]
    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        self.0.with_mut(f)
    }
}

/// The branch points of the core reached in this process (`crate::coverage`): a `std` mutex,
/// which neither checker sees, so recording adds no synchronisation to the explored program.
static REACHED: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Records that the branch point `name` was reached (the `branch!` macro of `crate::coverage`).
#[inline]
pub fn coverage_point(name: &'static str) {
    REACHED.lock().unwrap_or_else(|e| e.into_inner()).insert(name);
}

/// Every branch point reached since the last [`coverage_take`], and forgets them.
pub fn coverage_take() -> Vec<&'static str> {
    std::mem::take(&mut *REACHED.lock().unwrap_or_else(|e| e.into_inner())).into_iter().collect()
}
