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
//! existing file) and add one line to the `registry!` invocation below (file, module, type): it
//! declares the module and registers the variant. The CLI, the benches and the loom models pick
//! it up from the registry (notes/new-variant.md).

pub use schedlab_core::StatsPolicy;
use schedlab_core::StatsKept;

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
    ($($file:literal => $module:ident :: $variant:ident),* $(,)?) => {
        $(
            #[path = $file]
            pub mod $module;
        )*

        /// Every registered variant, in report order.
        pub const ALL: &[VariantInfo] = &[$(VariantInfo::of::<$module::$variant>()),*];

        /// Runs `visitor` with the type of the variant called `name`; `None` if there is none.
        pub fn visit<V: VariantVisitor>(name: &str, visitor: V) -> Option<V::Output> {
            $(
                if name == <$module::$variant as StatsPolicy>::NAME {
                    return Some(visitor.visit::<$module::$variant>());
                }
            )*
            None
        }
    };
}

registry![
    "sched-lock.rs" => sched_lock::SchedLock,
    "queue-lock.rs" => queue_lock::QueueLock,
    "unlocked.rs" => unlocked::Unlocked,
    "epoch.rs" => epoch::Epoch,
    "debug-off.rs" => debug_off::DebugOff,
    "no-stats.rs" => no_stats::NoStats,
];

/// The variant called `name`.
pub fn info(name: &str) -> Option<VariantInfo> {
    ALL.iter().copied().find(|v| v.name == name)
}

/// The variants that are safe under group removal (the default set of runs and comparisons).
pub fn safe() -> impl Iterator<Item = VariantInfo> {
    ALL.iter().copied().filter(|v| v.safe_under_removal)
}
