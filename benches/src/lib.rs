//! # schedlab-benches: the workload driver and the benchmarks
//!
//! [`driver::workload`] runs fio/IOSpeed-like jobs against one scheduler on a null device
//! (completion inline, zero latency) and returns throughput, per-job throughput, request counts
//! and the end-of-run conservation checks. The `schedlab` CLI and the criterion benches both use
//! it.
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
//! ## The map: stages, bottom first
//!
//! **The rule: a stage imports only the stages below it** (never one above, never a sibling of
//! its own stage), and no module imports itself round a circle, not even between the files of one
//! folder. `benches/tests/layering.rs` reads this folder and checks both; a new top-level module
//! has to be placed in a stage there.
//!
//! ```text
//! 5 report/       text tables and charts of the experiments' results; runs nothing
//!                   compare.rs, sweep.rs, predict.rs, simulate.rs, roundtrip.rs, run.rs,
//!                   kernel.rs (each command's text), chart.rs (sweep's SVG)
//! 4 experiment/   MANY runs -> a report value; prints nothing
//!                   mod.rs (the experiment shape), observer.rs (Event, Observer),
//!                   compare.rs, sweep.rs, validate.rs (the model against runs), kernel/
//!                   predict.rs (the model's prediction), simulate.rs, roundtrip.rs,
//!                   run.rs (one run: `schedlab run`),
//!                   flamegraph.rs, trace_summary.rs (the files they draw),
//!                   options/ (each experiment's command-line options and their
//!                   translation into its configuration)
//! 3 model/        `schedlab predict`'s discrete-event simulation and its calibration:
//!                   mod.rs, calibrate.rs, harness.rs, sim.rs, topology.rs, probes.rs
//!   policy_sim/   `schedlab simulate`: the scheduler on a virtual clock: mod.rs, device.rs
//! 2 driver/       ONE run: workload.rs, host.rs (CPUs, pinning, CPU accounting),
//!                   noise.rs (re-runs of disturbed runs), roundtrip.rs,
//!                   child.rs (one run by a schedlab executable, as a child process),
//!                   profile/ (sampling, folded, flamegraph, shares, criterion)
//! 1 files/        no measurement: output.rs (safe writes), trace_check.rs, provenance.rs,
//!                   input.rs (capped, polled reads), stop.rs (work that cannot poll)
//! 0 stats.rs      median, Spread, PerThread, bootstrap_interval, judge_goal, fit_usl
//!   counts.rs     add, add_to, sum: sums of counts that refuse to pass u64::MAX
//!   seeds.rs      Seed, SEEDS: the seeds' figures and the goals (reference data, not a job)
//!   error.rs      ErrorKind, ExperimentError (the exit code of each kind)
//! ```
//!
//! What each does:
//! - [`experiment::compare`] runs every variant round by round (plain runs for KIOPS,
//!   instrumented runs for the lock counters of `schedlab_core::lockstat`) and sets the measured
//!   ratios beside the seeds'; [`experiment::sweep`] measures KIOPS against thread count and
//!   appends each point to a CSV, and [`report::chart`] draws it with [`model`]'s prediction
//!   beside the points.
//! - [`model`] is `schedlab predict`: a discrete-event simulation of the workload on N CPUs, each
//!   lock by its kind's discipline, calibrated on single-threaded runs (its one adapter to the
//!   lock statistics is `model::calibrate::critical_sections`); [`experiment::validate`] sets it
//!   against runs here.
//! - [`policy_sim`] is the other driver: the same scheduler core on a virtual clock,
//!   single-threaded, in front of a null, SSD or disk model, for scheduling-policy questions
//!   (idling, weights) rather than lock costs. Deterministic: same configuration and seed, same
//!   result.
//! - [`files::output`] writes every output file: checked before any work, regular files replaced
//!   by a rename (never half-written), devices, FIFOs and symlinks written through (never
//!   removed). [`files::trace_check`] reads the Chrome / Perfetto traces `schedlab run --trace`
//!   writes: it checks their format and that no two holds of one lock overlap, and summarises
//!   holds, waits and hand-overs.
//! - [`experiment::kernel`] is `schedlab kernel`: the same workload on this machine's own kernel
//!   (fio under none, mq-deadline, bfq and bfq with cgroups, on a loop device it makes and puts
//!   back), its lock contention from the kernel's tracepoints and a perf flamegraph, beside the
//!   model's matching rows; `kernel::inject` (`--inject`) spins a known cost per I/O at BFQ's
//!   insert inside and outside its lock in the running kernel, beside the model's
//!   `--inject-ns`. It is the first experiment in the house shape of [`experiment`]
//!   (configuration, stop flag and observer in; a serialisable report or a typed [`error`] carrying its
//!   exit code out).
//!
pub mod counts;
pub mod driver;
pub mod error;
pub mod experiment;
pub mod files;
pub mod model;
pub mod policy_sim;
pub mod report;
pub mod seeds;
pub mod stats;
