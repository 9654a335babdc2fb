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
//! [`sim`] is the other driver: the same scheduler core on a virtual clock, single-threaded, in
//! front of a null, SSD or disk model, for scheduling-policy questions (idling, weights) rather
//! than lock costs. Deterministic: same configuration and seed, same result.

pub mod provenance;
pub mod roundtrip;
pub mod sim;
pub mod workload;
