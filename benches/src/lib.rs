//! # schedlab-benches: the workload driver and the benchmarks
//!
//! [`workload`] runs fio/IOSpeed-like jobs against one scheduler on a null device (completion
//! inline, zero latency) and returns throughput, per-job throughput, request counts and the
//! end-of-run conservation checks. The `schedlab` CLI and the criterion benches both use it.
//!
//! Design choices, and why:
//! - every job is a thread *and* a process with its own queue, and dispatches as well as submits
//!   (blk-mq runs the hardware queue from the submitting context), so the scheduler lock is taken
//!   about three times per request: insert, dispatch, completion;
//! - a job's IOPS count its own completed requests, so an unfair lock shows up as spread between
//!   jobs, not only in the total;
//! - group churn runs on its own thread and reaches jobs through a mailbox, the way a cgroup move
//!   reaches a process at its next request.
//!
//! [`compare`] runs every variant round by round (plain runs for KIOPS, instrumented runs for the
//! lock counters of `schedlab_core::lockstat`) and sets the measured ratios beside the seeds';
//! [`sweep`] measures KIOPS against thread count, appends each point to a CSV, and draws an SVG
//! chart with [`predict`]'s model beside the points.
//!
//! [`predict`] is `schedlab predict`: a discrete-event simulation of the workload on N CPUs, each
//! lock by its kind's discipline, calibrated on single-threaded runs (its one adapter to the lock
//! statistics is `predict::calibrate::critical_sections`), and its validation against runs here.
//!
//! [`sim`] is the other driver: the same scheduler core on a virtual clock, single-threaded, in
//! front of a null, SSD or disk model, for scheduling-policy questions (idling, weights) rather
//! than lock costs. Deterministic: same configuration and seed, same result.
//!
//! [`output`] writes every output file: checked before any work, regular files replaced by a
//! rename (never half-written), devices, FIFOs and symlinks written through (never removed).
//!
//! [`kernel`] is `schedlab kernel`: the same workload on this machine's own kernel (fio under
//! none, mq-deadline, bfq and bfq with cgroups, on a loop device it makes and puts back), its lock
//! contention from the kernel's tracepoints and a perf flamegraph, beside the model's matching
//! rows. It is the first experiment in the house shape of [`experiment`] (configuration, stop flag
//! and observer in; a serialisable report or a typed error carrying its exit code out). [`stats`]
//! holds the one median and spread every experiment uses.
//!
//! [`trace_check`] reads the Chrome / Perfetto traces `schedlab run --trace` writes: it checks their
//! format and that no two holds of one lock overlap, and summarises holds, waits and hand-overs.

pub mod driver;
pub mod error;
pub mod files;
pub mod experiment;
pub mod model;
pub mod policy_sim;
pub mod report;
pub mod seeds;
pub mod stats;

/// The old name of [`stats`].
pub use stats as numbers;

// The old paths of the moved modules (the CLI, the benches and the tests use them).
pub use driver::{profile, roundtrip, workload};
pub use experiment::kernel;

/// The old path of `schedlab compare`: the experiment and its tables.
pub mod compare {
    pub use crate::experiment::compare::*;
    pub use crate::report::compare::*;
}

/// The old path of `schedlab sweep`: the experiment and its chart.
pub mod sweep {
    pub use crate::experiment::sweep::*;
    pub use crate::report::chart::*;
}
pub use files::{output, provenance, trace_check};
pub use model as predict;
pub use policy_sim as sim;
