//! # schedlab-core: a BFQ-style I/O scheduler whose group statistics can be moved
//!
//! This crate re-creates, in user space, the hot paths of Linux BFQ (4.12–4.15 era) closely
//! enough that the cost and the locking of its group statistics behave as they did in 2017, when
//! they took about 40 % of BFQ's time (`../shared/reference/kernel-bfq.md`).
//!
//! ## Structure
//!
//! | module | kernel counterpart | what it holds |
//! | --- | --- | --- |
//! | [`sync`] | spinlock_t, atomics, RCU | the one facade, at the bottom (it imports nothing of the crate): locks (fair ticket spinlock or parking_lot, as raw locks, and the measured wrapper), atomics, `Arc`, cells, threads, CPU slot, epoch pins, the lock-measurement mechanism (`sync::measure`); a real backend, and a model backend for loom (`cfg(loom)`) or shuttle (`cfg(shuttle)`) |
//! | [`clock`] | `ktime_get_ns` | real TSC clock, manual clock for tests and models |
//! | [`lockstat`] | `/proc/lock_stat` | lock statistics of the named locks (scheduler, queue, counter sums): names the classes and paths the facade counts, injects the lock spans, reports acquisitions, contentions, owner changes (exact), waits (sampled 1 in M contended, estimated), holds (sampled 1 in N, estimated; or exact mode), per path; switchable at run time |
//! | `state` | `struct bfq_data`; bfq-iosched.c, bfq-wf2q.c (`state::wf2q`), bfq-cgroup.c (`state::cgroup`) | everything under the scheduler lock: groups' and queues' entities and service trees (B-WF2Q+), requests, the priority dispatch list, the in-service queue, the idle timer |
//! | [`objects`] | `struct bfq_group`, `struct bfq_queue`, blk-cgroup rstat | the parts a deferred update reaches after the unlock: group statistics and reference count, a queue's current group and its listing pins; `objects::rstat`, the per-CPU pending lists flushed on read and drained on release |
//! | [`insert`] | `bfq_insert_requests` (2023 and 2024) | the insert-path axis: `direct`, or insertion lists spliced by dispatch; the request types (`RequestSpec`, `InsertOutcome`); below the scheduler, which it reaches through `InsertSite`/`DispatchSite` |
//! | [`stats`] | `struct bfqg_stats`, `blkg_rwstat`, `percpu_counter` | per-CPU-slot counters with a locked all-slot sum; every `bfqg_stats_*` function |
//! | [`update`] | the `bfqg_stats_*` calls | the statistics updates: kinds, arguments, how one is applied to a group |
//! | [`policy`] | the 4.15 deferral and `CONFIG_DEBUG_BLK_CGROUP` | the stats-policy trait: which updates run under the lock, which after it |
//! | [`protection`] | the 4.15 existence argument, RCU | what keeps a group alive while a deferred update reaches it, as types: the four protections, their witnesses, how each frees a retired group |
//! | [`inject`] | a bpftrace spin at `block_rq_insert` / `block_getrq` (`schedlab kernel --inject`) | a known cost per request where it enters the scheduler, inside the scheduler lock (direct insert; the lists' splice) or just before the insert (`SchedConfig::inject`) |
//! | [`fault`] | the kernel's lifetime bugs | named fault-injection switches for the models' negative controls (feature `fault-injection`, off by default) |
//! | [`trace`] | tracepoints (`trace_block_rq_*`), lockdep's lock events | the `tracing` targets, the trace gate, the path spans and idle-timer events (imports nothing of the crate; lock spans are made in `lockstat`, statistics spans in `update`) |
//!
//! | [`scheduler`] | `bfq_bio_merge`, `bfq_limit_depth`, `bfq_insert_request`, `bfq_dispatch_request`, `bfq_finish_request`, `bfq_pd_offline` | the paths, groups, processes |
//! | [`profile`] | kernel generations | which lock sites a submission runs (`4.12`, `6.18`), and the one description of each call's lock order that the calibration and `predict` read |
//! | [`deadline`] | `mq-deadline` | the deadline reference scheduler: per-direction FIFO and sorted tree under one lock, no groups, no statistics |
//!
//! The modules are layered: `sync` at the bottom, and no circle among the others
//! (`tests/layering.rs` checks both).
//!
//! ## The paths and their locks
//!
//! ```text
//! bio merge:  [sched lock: group lookup, back/front merge lookup in the queue's sort_list] -> run_deferred   (profiles 4.12, 6.18)
//! depth:      (queue idle: no lock) [sched lock: walk the entity up its groups, allocated against each level's share]   (6.18)
//! insert:     [stats at submission, for a policy that counts there] [sched lock: group lookup; merge | add to queue, activate entities, maybe stop idle timer; route stats] -> run_deferred
//!   (lists)   [insert lock: list the request, pin its queue]; the next dispatch splices it in under the sched lock
//! dispatch:   [sched lock: dispatch_begin; priority list | select queue (expire, descend trees), take request, charge service; route stats; dispatch_end] -> run_deferred
//! completion: run_deferred(completion stats) -> [sched lock: bookkeeping, arm idle timer or expire, put queue]
//! removal:    [queue lock?] [sched lock: move queues to parent, transfer stats, drop online ref] retire_group [/queue lock]
//! ```
//!
//! Lock order: queue lock before scheduler lock. Deferred updates take the queue lock (or an epoch
//! pin, or nothing) only after the scheduler lock is released.
//!
//! ## Lifetimes (notes/invariants.md)
//!
//! A deferred update holds a queue pointer, never a group pointer: the queue is pinned by the
//! request in flight or by the process running the path (I1a); the group is read from the queue
//! when the update is applied, and stays allocated only as long as the policy's protection holds
//! (I1b–I1d). The protection is a type ([`protection`]): applying a batch takes its witness, and
//! the scheduler takes the locks, refuses the operations and frees retired groups as it says.
//! Groups are freed through [`policy::StatsPolicy::retire_group`] and the protection's release;
//! freeing is observable (a census of live objects, and under a model checker a poisoned liveness
//! word on every freed object). `schedlab-verify` model-checks all of it.
//!
//! ## Running
//!
//! `cargo run --release -- run --variant queue-lock --threads 2 --duration 2 --groups 4 --churn 20`
//! drives this crate through the `schedlab` CLI; `cargo test -p schedlab-core` runs its unit tests.
//!
//! ## Limits
//!
//! One I/O priority class; no weight raising (`low_latency=0`, as in the seeds' benchmark); no
//! queue merging (cooperators); simplified budget feedback. notes/kernel-map.md lists every
//! deviation.

pub mod clock;
#[macro_use]
mod coverage;
pub mod deadline;
pub mod fault;
pub mod inject;
pub mod insert;
pub mod lockstat;
pub mod objects;
pub mod policy;
pub mod profile;
pub mod protection;
pub mod scheduler;
mod sorted;
mod state;
pub mod stats;
pub mod sync;
pub mod trace;
pub mod update;

pub use clock::{Clock, ManualClock, RealClock, SchedClock};
pub use inject::{Inject, InjectSite, PadSite, SitePads};
pub use insert::InsertPathKind;
pub use objects::rstat::RstatLists;
pub use objects::{Census, GroupPtr, GroupShared, QueueRef, QueueShared, RetiredGroup};
pub use policy::{DeferredBatch, DeferredCx, LockedView, Route, StatsPolicy};
pub use profile::{KernelProfile, SubmitSite};
pub use protection::{
    GracePeriod, NoRemoval, Protection, QueueLock, Reclaimer, SchedLockOnly, Witness,
};
#[cfg(not(any(loom, shuttle)))]
pub use scheduler::quiesce_until_reclaimed;
pub use scheduler::{
    Completed, Consistency, Dispatched, GroupId, GroupInfo, Process, SchedError, Scheduler,
};
pub use state::{InsertOutcome, Ledger, RequestCounters, RequestSpec, SchedConfig};
pub use stats::{GroupStats, Op, StatsSnapshot};
pub use sync::LockKind;
pub use update::{Path, StatEvent, StatKind, StatUpdate, StatsKept};
