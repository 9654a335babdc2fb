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
//! | `rstat` | io_service_bytes/io_serviced per-CPU after the lock, flushed on read (blk-cgroup 6.2 + 2023) | crossbeam-epoch pin; groups drained on release | legacy two |
//! | `no-stats` | nowhere | — | none |
//!
//! The protection column is each variant's `StatsPolicy::Protection` type
//! (`schedlab_core::protection`): the scheduler holds up its side (locks, refusals, how a retired
//! group is freed), and the variant's `run_deferred` needs the protection's witness to apply a
//! batch. No variant here contains `unsafe`.
//!
//! Each variant runs on either insert path (`schedlab_core::insert`: `direct`, or the 2024
//! insertion lists), chosen per scheduler in `SchedConfig::insert`.
//!
//! ## Adding a variant
//!
//! Write `src/<name>.rs` with a type implementing [`StatsPolicy`] (start from the closest
//! existing file) and add one line to the list in [`with_registry!`] below (file, module, type): it
//! declares the module and registers the variant. The CLI and the benches pick it up from the
//! registry, and the model suites of `schedlab-verify` generate every check for it from the same
//! list (notes/new-variant.md).

#![warn(unsafe_code)]

pub use schedlab_core::StatsPolicy;
use schedlab_core::{Protection, StatsKept};

/// What the registry knows of a variant without instantiating it.
#[derive(Clone, Copy, Debug)]
pub struct VariantInfo {
    pub name: &'static str,
    pub summary: &'static str,
    pub kept: StatsKept,
    /// Whether groups may be removed while it runs.
    pub safe_under_removal: bool,
    /// What keeps a group alive while a deferred update reaches it (`schedlab_core::protection`).
    pub protection: &'static str,
}

impl VariantInfo {
    const fn of<P: StatsPolicy>() -> Self {
        VariantInfo {
            name: P::NAME,
            summary: P::SUMMARY,
            kept: P::KEPT,
            safe_under_removal: <P::Protection as Protection>::ALLOWS_REMOVAL,
            protection: <P::Protection as Protection>::NAME,
        }
    }
}

/// Something to do with a variant's type: the registry calls `visit::<P>()` for the one named.
pub trait VariantVisitor {
    type Output;
    fn visit<P: StatsPolicy>(self) -> Self::Output;
}

/// The registry's one list: file, module and type of every variant, in report order. Add a line
/// here for a new variant. The list is handed to `$callback!`, so that this crate (the modules and
/// [`ALL`], [`visit`]) and the model suites of `schedlab-verify` (a module of checks per variant)
/// are generated from the same lines.
#[macro_export]
macro_rules! with_registry {
    ($($callback:ident)::+) => {
        $($callback)::+! {
            "sched-lock.rs" => sched_lock::SchedLock,
            "queue-lock.rs" => queue_lock::QueueLock,
            "unlocked.rs" => unlocked::Unlocked,
            "epoch.rs" => epoch::Epoch,
            "debug-off.rs" => debug_off::DebugOff,
            "rstat.rs" => rstat::Rstat,
            "mainline.rs" => mainline::Mainline,
            "no-stats.rs" => no_stats::NoStats,
        }
    };
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

with_registry!(registry);

/// A reference row: a baseline the experiments run beside the variants. Not a statistics variant
/// (no [`StatsPolicy`]), so not in the model checks: nothing of it is deferred or freed.
#[derive(Clone, Copy, Debug)]
pub struct ReferenceInfo {
    pub name: &'static str,
    pub summary: &'static str,
}

/// The reference rows: baselines beside the variants, run by the workload driver (`schedlab_benches::driver::workload::Reference`). `none`: no scheduler at all, as the kernel's `none` elevator; the
/// workload driver (`schedlab_benches::driver::workload`) issues each request straight to the null device.
pub const REFERENCES: &[ReferenceInfo] = &[
    ReferenceInfo {
        name: "none",
        summary: "no scheduler, no statistics: each request goes straight to the null device (the kernel's `none`); a baseline, not a variant",
    },
    ReferenceInfo {
        name: "deadline",
        summary: "mq-deadline (schedlab_core::deadline): bio merge and insert under its lock, per-direction FIFO and sorted tree, no groups, no statistics; a baseline, not a variant",
    },
];

/// The reference row called `name`.
pub fn reference(name: &str) -> Option<ReferenceInfo> {
    REFERENCES.iter().copied().find(|r| r.name == name)
}

/// The variant called `name`.
pub fn info(name: &str) -> Option<VariantInfo> {
    ALL.iter().copied().find(|v| v.name == name)
}

/// The variants that are safe under group removal (the default set of runs and comparisons).
pub fn safe() -> impl Iterator<Item = VariantInfo> {
    ALL.iter().copied().filter(|v| v.safe_under_removal)
}
