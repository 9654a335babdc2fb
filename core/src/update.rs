//! The statistics updates themselves: which kernel function each mirrors, its arguments, and how
//! it is applied to a group. Below the policy (which decides *where* an update runs) and below the
//! scheduler (which decides *when* one is emitted); it knows groups only through their statistics.

use crate::objects::{GroupShared, QueueRef};
use crate::stats::Op;

/// The kernel function a statistics update mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StatKind {
    IoAdd,
    IoRemove,
    IoMerged,
    AvgQueueSize,
    SetStartEmptyTime,
    IdleTime,
    Completion,
    LegacyIo,
    Dequeue,
    SetStartIdleTime,
    TimesliceUsed,
}

impl StatKind {
    /// Every kind.
    pub const ALL: [StatKind; 11] = [
        StatKind::IoAdd,
        StatKind::IoRemove,
        StatKind::IoMerged,
        StatKind::AvgQueueSize,
        StatKind::SetStartEmptyTime,
        StatKind::IdleTime,
        StatKind::Completion,
        StatKind::LegacyIo,
        StatKind::Dequeue,
        StatKind::SetStartIdleTime,
        StatKind::TimesliceUsed,
    ];

    /// The kernel function this mirrors.
    pub fn kernel_name(self) -> &'static str {
        match self {
            StatKind::IoAdd => "bfqg_stats_update_io_add",
            StatKind::IoRemove => "bfqg_stats_update_io_remove",
            StatKind::IoMerged => "bfqg_stats_update_io_merged",
            StatKind::AvgQueueSize => "bfqg_stats_update_avg_queue_size",
            StatKind::SetStartEmptyTime => "bfqg_stats_set_start_empty_time",
            StatKind::IdleTime => "bfqg_stats_update_idle_time",
            StatKind::Completion => "bfqg_stats_update_completion",
            StatKind::LegacyIo => "blkg_rwstat_add(io_service_bytes, io_serviced)",
            StatKind::Dequeue => "bfqg_stats_update_dequeue",
            StatKind::SetStartIdleTime => "bfqg_stats_set_start_idle_time",
            StatKind::TimesliceUsed => "bfqg_stats_update_timeslice_used",
        }
    }

    /// Whether an update of this kind may be deferred past the scheduler lock.
    pub fn deferrable(self) -> bool {
        !matches!(self, StatKind::Dequeue | StatKind::SetStartIdleTime | StatKind::TimesliceUsed)
    }

    /// Whether this is one of the debug statistics (all but io_service_bytes/io_serviced).
    pub fn is_debug(self) -> bool {
        self != StatKind::LegacyIo
    }
}

/// One statistics update and its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatUpdate {
    /// `group_in_service`: whether the queue's group is the group being served (captured under
    /// the lock; decides whether a group-wait interval opens).
    IoAdd {
        op: Op,
        group_in_service: bool,
    },
    IoRemove {
        op: Op,
    },
    IoMerged {
        op: Op,
    },
    AvgQueueSize,
    SetStartEmptyTime,
    IdleTime,
    Completion {
        op: Op,
        start_ns: u64,
        io_start_ns: u64,
    },
    LegacyIo {
        op: Op,
        bytes: u64,
    },
    Dequeue,
    SetStartIdleTime,
    TimesliceUsed {
        used_ns: u64,
    },
}

impl StatUpdate {
    pub fn kind(&self) -> StatKind {
        match self {
            StatUpdate::IoAdd { .. } => StatKind::IoAdd,
            StatUpdate::IoRemove { .. } => StatKind::IoRemove,
            StatUpdate::IoMerged { .. } => StatKind::IoMerged,
            StatUpdate::AvgQueueSize => StatKind::AvgQueueSize,
            StatUpdate::SetStartEmptyTime => StatKind::SetStartEmptyTime,
            StatUpdate::IdleTime => StatKind::IdleTime,
            StatUpdate::Completion { .. } => StatKind::Completion,
            StatUpdate::LegacyIo { .. } => StatKind::LegacyIo,
            StatUpdate::Dequeue => StatKind::Dequeue,
            StatUpdate::SetStartIdleTime => StatKind::SetStartIdleTime,
            StatUpdate::TimesliceUsed { .. } => StatKind::TimesliceUsed,
        }
    }

    /// Calls the matching `GroupStats` function on `group`'s statistics (inside a
    /// [`crate::trace::STATS`] span named by the kernel function when traced).
    #[inline]
    pub fn apply_to(&self, group: &GroupShared, now: u64) {
        if crate::trace::hot_paths_traced() {
            self.apply_to_traced(group, now);
        } else {
            self.apply_to_stats(group.stats(), now);
        }
    }

    /// [`StatUpdate::apply_to`] inside its span (out of line: the untraced update stays small).
    #[inline(never)]
    #[cold]
    fn apply_to_traced(&self, group: &GroupShared, now: u64) {
        let _span = stat_span(self.kind(), group.serial()).entered();
        self.apply_to_stats(group.stats(), now);
    }

    #[inline(always)]
    fn apply_to_stats(&self, stats: &crate::stats::GroupStats, now: u64) {
        match *self {
            StatUpdate::IoAdd { op, group_in_service } => {
                stats.update_io_add(op, now, group_in_service)
            }
            StatUpdate::IoRemove { op } => stats.update_io_remove(op),
            StatUpdate::IoMerged { op } => stats.update_io_merged(op),
            StatUpdate::AvgQueueSize => stats.update_avg_queue_size(now),
            StatUpdate::SetStartEmptyTime => stats.set_start_empty_time(now),
            StatUpdate::IdleTime => stats.update_idle_time(now),
            StatUpdate::Completion { op, start_ns, io_start_ns } => {
                stats.update_completion(op, start_ns, io_start_ns, now)
            }
            StatUpdate::LegacyIo { op, bytes } => stats.update_legacy_io(op, bytes),
            StatUpdate::Dequeue => stats.update_dequeue(),
            StatUpdate::SetStartIdleTime => stats.set_start_idle_time(now),
            StatUpdate::TimesliceUsed { used_ns } => stats.update_timeslice_used(used_ns),
        }
    }
}

/// An update for the group of `queue`.
#[derive(Clone, Copy, Debug)]
pub struct StatEvent {
    pub queue: QueueRef,
    pub update: StatUpdate,
}

/// Which statistics a policy keeps (for reports and for the consistency checks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatsKept {
    /// The whole debug set plus io_service_bytes/io_serviced.
    Full,
    /// Only io_service_bytes/io_serviced (`CONFIG_DEBUG_BLK_CGROUP` off).
    Legacy,
    /// Nothing.
    None,
}

/// The path a batch was built on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    Insert,
    Dispatch,
    Completion,
}

/// The span of one statistics update on `group` (by serial), named by the kernel function it
/// mirrors: one callsite per kind (a span's name is static, and the name is what a trace viewer
/// shows). `stat_span_names_are_the_kernel_functions` checks each against
/// [`StatKind::kernel_name`].
#[inline(never)]
#[cold]
fn stat_span(kind: StatKind, group: u64) -> tracing::Span {
    use crate::trace::STATS;
    use tracing::trace_span;
    match kind {
        StatKind::IoAdd => trace_span!(target: STATS, "bfqg_stats_update_io_add", group),
        StatKind::IoRemove => trace_span!(target: STATS, "bfqg_stats_update_io_remove", group),
        StatKind::IoMerged => trace_span!(target: STATS, "bfqg_stats_update_io_merged", group),
        StatKind::AvgQueueSize => {
            trace_span!(target: STATS, "bfqg_stats_update_avg_queue_size", group)
        }
        StatKind::SetStartEmptyTime => {
            trace_span!(target: STATS, "bfqg_stats_set_start_empty_time", group)
        }
        StatKind::IdleTime => trace_span!(target: STATS, "bfqg_stats_update_idle_time", group),
        StatKind::Completion => trace_span!(target: STATS, "bfqg_stats_update_completion", group),
        StatKind::LegacyIo => {
            trace_span!(target: STATS, "blkg_rwstat_add(io_service_bytes, io_serviced)", group)
        }
        StatKind::Dequeue => trace_span!(target: STATS, "bfqg_stats_update_dequeue", group),
        StatKind::SetStartIdleTime => {
            trace_span!(target: STATS, "bfqg_stats_set_start_idle_time", group)
        }
        StatKind::TimesliceUsed => {
            trace_span!(target: STATS, "bfqg_stats_update_timeslice_used", group)
        }
    }
}

#[cfg(all(test, not(any(loom, shuttle))))]
mod span_tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    /// A subscriber that keeps the name of every span created (nothing else).
    struct Names(Arc<Mutex<Vec<String>>>);

    impl Subscriber for Names {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, span: &Attributes<'_>) -> Id {
            let mut names = self.0.lock().unwrap();
            names.push(span.metadata().name().to_string());
            Id::from_u64(names.len() as u64)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, _: &Event<'_>) {}
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }

    #[test]
    fn stat_span_names_are_the_kernel_functions() {
        let names = Arc::new(Mutex::new(Vec::new()));
        tracing::subscriber::with_default(Names(names.clone()), || {
            for kind in StatKind::ALL {
                let _ = stat_span(kind, 7);
            }
        });
        let names = names.lock().unwrap();
        let expected: Vec<_> = StatKind::ALL.iter().map(|k| k.kernel_name().to_string()).collect();
        assert_eq!(*names, expected);
    }
}
