//! schedlab's `tracing` vocabulary: which spans and events the paths emit, under which targets,
//! at which levels, and what they cost when nobody listens.
//!
//! ## What is emitted
//!
//! | target | level | kind | name | fields | where |
//! | --- | --- | --- | --- | --- | --- |
//! | [`PATHS`] | TRACE | span | `bfq_insert_request`, `bfq_dispatch_request`, `bfq_finish_request` | `pid`, `sector` (insert), `tag` (finish) | the three hot paths, whole (deferred updates included) |
//! | [`PATHS`] | TRACE | span | `bfq_pd_offline` (group removal), `bfq_bfqq_move` (process move) | `group` | the reparenting paths |
//! | [`STATS`] | TRACE | span | the kernel function, e.g. `bfqg_stats_update_io_add` ([`StatKind::kernel_name`]) | `group` (serial) | every statistics update applied, under whatever protection the variant gives it |
//! | [`LOCKS`] | TRACE | span | `sched lock: wait`, `sched lock: hold`, `queue lock: wait`, `queue lock: hold` | `lock`, `path` (insert, dispatch, completion, stats, removal, other) | a contended acquisition (wait: from the failed `try_lock` to the acquisition), and every hold (from the acquisition to the release); the scheduler and queue locks (and any class a variant registers), real build only |
//! | [`IDLE`] | TRACE | event | `idle timer armed`, `idle timer fired`, `idle timer disabled` | `queue`, `deadline_ns` | `bfq_arm_slice_timer`, the timer's expiry (checked on dispatch), a request for the idling queue |
//! | [`GROUPS`] | DEBUG | event | `group created`, `group offline`, `group freed` | `group`, `weight` | `bfq_pd_init`, `bfq_pd_offline`, the last reference going |
//!
//! A lock's spans are made in `sync.rs` (the facade owns the locks): the hold span is opened after
//! the lock is taken and closed before it is released, so on a timeline the hold slices of one
//! lock can never overlap (the trace tests check it).
//!
//! ## Cost when nobody listens
//!
//! Every TRACE site sits behind [`hot_paths_traced`]: `TRACE <= STATIC_MAX_LEVEL` (a constant) and
//! `TRACE <= LevelFilter::current()` (one relaxed load of a word that only changes when a
//! subscriber is installed). With no subscriber, or one whose filter stops below TRACE (`-v`,
//! `-vv`), that is the whole cost: the span constructors are out of line, and a path runs through
//! [`in_path`], whose untraced branch is the plain call (no `Span` value to build, enter or drop). Building with the
//! workspace feature `no-trace` (tracing's `release_max_level_debug`) removes even the load;
//! `notes/tracing.md` measures the difference.
//!
//! Under `cfg(loom)` the same calls compile (no subscriber is ever installed in a model), and the
//! lock spans do not exist (loom's `Mutex` has no hook).

use crate::update::StatKind;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
use tracing::span::EnteredSpan;
use tracing::{trace_span, Level, Span};

/// Target of the path spans.
pub const PATHS: &str = "schedlab::path";
/// Target of the statistics-update spans.
pub const STATS: &str = "schedlab::stats";
/// Target of the lock wait and hold spans.
pub const LOCKS: &str = "schedlab::lock";
/// Target of the idle-timer events.
pub const IDLE: &str = "schedlab::idle";
/// Target of the group lifecycle events.
pub const GROUPS: &str = "schedlab::group";

/// The capture window: a recorder (the CLI's trace file) keeps only what is emitted while it is
/// open. The workload driver opens it when its ramp-up ends and closes it after the configured
/// window, so that a trace covers steady state and stays a size a viewer can open.
static CAPTURE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Opens or closes the capture window.
pub fn set_capture(open: bool) {
    CAPTURE.store(open, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the capture window is open.
#[inline]
pub fn capturing() -> bool {
    CAPTURE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether a TRACE-level span or event could be recorded at all: the cheap gate in front of every
/// hot-path site (see the module documentation).
#[inline(always)]
pub fn hot_paths_traced() -> bool {
    Level::TRACE <= STATIC_MAX_LEVEL && Level::TRACE <= LevelFilter::current()
}

/// The three hot paths and the two reparenting paths, by the kernel function each mirrors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathSpan {
    Insert { pid: u64, sector: u64 },
    Dispatch,
    Finish { tag: u64 },
    Offline { group: u64 },
    Move { pid: u64 },
}

/// Runs `f` inside the span of `path`. Untraced, this is `f()` behind one branch: the span, its
/// guard and its drop live only in the cold copy, so they do not count against the inliner's
/// budget for the path (measured with callgrind: a guard with a `Drop` on the hot path made the
/// compiler stop inlining the scheduler's locked halves into the paths).
#[inline(always)]
pub fn in_path<R>(path: PathSpan, f: impl FnOnce() -> R) -> R {
    if hot_paths_traced() {
        in_path_traced(path, f)
    } else {
        f()
    }
}

#[inline(never)]
#[cold]
fn in_path_traced<R>(path: PathSpan, f: impl FnOnce() -> R) -> R {
    let _entered = path_span_slow(path).entered();
    f()
}

#[inline(never)]
#[cold]
fn path_span_slow(path: PathSpan) -> Span {
    match path {
        PathSpan::Insert { pid, sector } => trace_span!(target: PATHS, "bfq_insert_request", pid, sector),
        PathSpan::Dispatch => trace_span!(target: PATHS, "bfq_dispatch_request"),
        PathSpan::Finish { tag } => trace_span!(target: PATHS, "bfq_finish_request", tag),
        PathSpan::Offline { group } => trace_span!(target: PATHS, "bfq_pd_offline", group),
        PathSpan::Move { pid } => trace_span!(target: PATHS, "bfq_bfqq_move", pid),
    }
}

/// Enters the span of one statistics update on `group` (by serial), named by the kernel function
/// it mirrors, until the guard drops. Called only when [`hot_paths_traced`] (from the cold copy of
/// `StatUpdate::apply_to`).
pub fn enter_stat(kind: StatKind, group: u64) -> EnteredSpan {
    stat_span_slow(kind, group).entered()
}

/// One callsite per kind: a span's name is static, and the name is what a trace viewer shows.
/// `stat_span_names_are_the_kernel_functions` checks each against [`StatKind::kernel_name`].
#[inline(never)]
#[cold]
fn stat_span_slow(kind: StatKind, group: u64) -> Span {
    match kind {
        StatKind::IoAdd => trace_span!(target: STATS, "bfqg_stats_update_io_add", group),
        StatKind::IoRemove => trace_span!(target: STATS, "bfqg_stats_update_io_remove", group),
        StatKind::IoMerged => trace_span!(target: STATS, "bfqg_stats_update_io_merged", group),
        StatKind::AvgQueueSize => trace_span!(target: STATS, "bfqg_stats_update_avg_queue_size", group),
        StatKind::SetStartEmptyTime => trace_span!(target: STATS, "bfqg_stats_set_start_empty_time", group),
        StatKind::IdleTime => trace_span!(target: STATS, "bfqg_stats_update_idle_time", group),
        StatKind::Completion => trace_span!(target: STATS, "bfqg_stats_update_completion", group),
        StatKind::LegacyIo => trace_span!(target: STATS, "blkg_rwstat_add(io_service_bytes, io_serviced)", group),
        StatKind::Dequeue => trace_span!(target: STATS, "bfqg_stats_update_dequeue", group),
        StatKind::SetStartIdleTime => trace_span!(target: STATS, "bfqg_stats_set_start_idle_time", group),
        StatKind::TimesliceUsed => trace_span!(target: STATS, "bfqg_stats_update_timeslice_used", group),
    }
}

/// What happened to the idle timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IdleTimer {
    /// `bfq_arm_slice_timer`: the in-service queue emptied and is worth waiting for.
    Armed { deadline_ns: u64 },
    /// The deadline passed with no request: the queue expires (`bfq_idle_slice_timer`).
    Fired,
    /// A request for the waiting queue arrived first (`bfq_rq_enqueued`).
    Disabled,
}

/// Records an idle-timer event for `queue` (a slab key of the scheduler state).
#[inline(always)]
pub fn idle_timer(queue: usize, what: IdleTimer) {
    if hot_paths_traced() {
        idle_timer_slow(queue, what);
    }
}

#[inline(never)]
#[cold]
fn idle_timer_slow(queue: usize, what: IdleTimer) {
    match what {
        IdleTimer::Armed { deadline_ns } => {
            tracing::trace!(name: "idle timer armed", target: IDLE, queue, deadline_ns, "idle timer armed")
        }
        IdleTimer::Fired => tracing::trace!(name: "idle timer fired", target: IDLE, queue, "idle timer fired"),
        IdleTimer::Disabled => tracing::trace!(name: "idle timer disabled", target: IDLE, queue, "idle timer disabled"),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
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
                let _ = stat_span_slow(kind, 7);
            }
        });
        let names = names.lock().unwrap();
        let expected: Vec<_> = StatKind::ALL.iter().map(|k| k.kernel_name().to_string()).collect();
        assert_eq!(*names, expected);
    }
}
