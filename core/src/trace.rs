//! schedlab's `tracing` vocabulary: which spans and events the paths emit, under which targets,
//! at which levels, and what they cost when nobody listens.
//!
//! ## What is emitted
//!
//! | target | level | kind | name | fields | where |
//! | --- | --- | --- | --- | --- | --- |
//! | [`PATHS`] | TRACE | span | `bfq_insert_request`, `bfq_dispatch_request`, `bfq_finish_request` | `pid`, `sector` (insert), `tag` (finish) | the three hot paths, whole (deferred updates included) |
//! | [`PATHS`] | TRACE | span | `bfq_pd_offline` (group removal), `bfq_bfqq_move` (process move) | `group` | the reparenting paths |
//! | [`STATS`] | TRACE | span | the kernel function, e.g. `bfqg_stats_update_io_add` (`StatKind::kernel_name`, made in `update.rs`) | `group` (serial) | every statistics update applied, under whatever protection the variant gives it |
//! | [`LOCKS`] | TRACE | span | `sched lock: wait`, `sched lock: hold`, `queue lock: wait`, `queue lock: hold` | `lock`, `path` (insert, dispatch, completion, stats, removal, other) | a contended acquisition (wait: from the failed `try_lock` to the acquisition), and every hold (from the acquisition to the release); the scheduler and queue locks (and any class a variant registers), real build only |
//! | [`IDLE`] | TRACE | event | `idle timer armed`, `idle timer fired`, `idle timer disabled` | `queue`, `deadline_ns` | `bfq_arm_slice_timer`, the timer's expiry (checked on dispatch), a request for the idling queue |
//! | [`GROUPS`] | DEBUG | event | `group created`, `group offline`, `group freed` | `group`, `weight` | `bfq_pd_init`, `bfq_pd_offline`, the last reference going |
//!
//! A lock's spans are made by `lockstat.rs` and injected into the sync facade (which owns the
//! locks and imports nothing of the scheduler): the hold span is opened after the lock is taken
//! and closed before it is released, so on a timeline the hold slices of one lock can never
//! overlap (the trace tests check it). The statistics spans are made in `update.rs`, beside the
//! kinds they name. This module imports nothing of the scheduler either.
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

use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
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
    BioMerge { pid: u64, sector: u64 },
    LimitDepth { pid: u64 },
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
        PathSpan::Insert { pid, sector } => {
            trace_span!(target: PATHS, "bfq_insert_request", pid, sector)
        }
        PathSpan::Dispatch => trace_span!(target: PATHS, "bfq_dispatch_request"),
        PathSpan::BioMerge { pid, sector } => {
            trace_span!(target: PATHS, "bfq_bio_merge", pid, sector)
        }
        PathSpan::LimitDepth { pid } => trace_span!(target: PATHS, "bfq_limit_depth", pid),
        PathSpan::Finish { tag } => trace_span!(target: PATHS, "bfq_finish_request", tag),
        PathSpan::Offline { group } => trace_span!(target: PATHS, "bfq_pd_offline", group),
        PathSpan::Move { pid } => trace_span!(target: PATHS, "bfq_bfqq_move", pid),
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
        IdleTimer::Fired => {
            tracing::trace!(name: "idle timer fired", target: IDLE, queue, "idle timer fired")
        }
        IdleTimer::Disabled => {
            tracing::trace!(name: "idle timer disabled", target: IDLE, queue, "idle timer disabled")
        }
    }
}
