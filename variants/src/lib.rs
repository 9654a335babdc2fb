//! # schedlab-variants: where the group statistics are updated
//!
//! One file per variant, each a [`StatsPolicy`] (the contract is documented in
//! `schedlab_core::policy`), and the registry below that the CLI, the benches and the models use.
//!
//! | variant | where the stats go | protection of deferred updates | kept |
//! | --- | --- | --- | --- |
//! | `sched-lock` | all under the scheduler lock | (none deferred) | all |
//! | `queue-lock` | deferred past the scheduler lock | the queue lock, also held by group removal | all |
//! | `unlocked` | deferred | none: group removal is refused | all |
//! | `epoch` | deferred | crossbeam-epoch pin; groups retired through the epoch | all |
//! | `debug-off` | io_service_bytes/io_serviced under the scheduler lock | (none deferred) | legacy two |
//! | `no-stats` | nowhere | — | none |
//!
//! ## Adding a variant
//!
//! Write `src/<name>.rs` with a type implementing [`StatsPolicy`] (start from the closest
//! existing file), declare the module below, and add one line to the `registry!` invocation. The
//! CLI, the benches and the loom models pick it up from the registry.

pub use schedlab_core::StatsPolicy;
use schedlab_core::StatsKept;

#[path = "debug-off.rs"]
pub mod debug_off;
#[path = "epoch.rs"]
pub mod epoch;
#[path = "no-stats.rs"]
pub mod no_stats;
#[path = "queue-lock.rs"]
pub mod queue_lock;
#[path = "sched-lock.rs"]
pub mod sched_lock;
#[path = "unlocked.rs"]
pub mod unlocked;

/// What the registry knows of a variant without instantiating it.
#[derive(Clone, Copy, Debug)]
pub struct VariantInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub kept: StatsKept,
    /// Whether groups may be removed while it runs.
    pub safe_under_removal: bool,
}

impl VariantInfo {
    const fn of<P: StatsPolicy>() -> Self {
        VariantInfo { name: P::NAME, summary: P::SUMMARY, kept: P::KEPT, safe_under_removal: P::SAFE_UNDER_GROUP_REMOVAL }
    }
}

/// Something to do with a variant's type: the registry calls `visit::<P>()` for the one named.
pub trait VariantVisitor {
    type Output;
    fn visit<P: StatsPolicy>(self) -> Self::Output;
}

macro_rules! registry {
    ($($variant:ty),* $(,)?) => {
        /// Every registered variant, in report order.
        pub const ALL: &[VariantInfo] = &[$(VariantInfo::of::<$variant>()),*];

        /// Runs `visitor` with the type of the variant called `name`; `None` if there is none.
        pub fn visit<V: VariantVisitor>(name: &str, visitor: V) -> Option<V::Output> {
            $(
                if name == <$variant as StatsPolicy>::NAME {
                    return Some(visitor.visit::<$variant>());
                }
            )*
            None
        }
    };
}

registry![
    sched_lock::SchedLock,
    queue_lock::QueueLock,
    unlocked::Unlocked,
    epoch::Epoch,
    debug_off::DebugOff,
    no_stats::NoStats,
];

/// The variant called `name`.
pub fn info(name: &str) -> Option<VariantInfo> {
    ALL.iter().copied().find(|v| v.name == name)
}

/// The variants that are safe under group removal (the default set of runs and comparisons).
pub fn safe() -> impl Iterator<Item = VariantInfo> {
    ALL.iter().copied().filter(|v| v.safe_under_removal)
}
